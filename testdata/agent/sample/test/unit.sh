#!/bin/sh
# The project's tests: sh test/unit.sh
fail=0
check() { # check WANT ARGS...: greet.sh ARGS prints WANT
	want=$1
	shift
	got=$(sh ./greet.sh "$@")
	if [ "$got" = "$want" ]; then
		echo "ok: greet.sh $*"
	else
		echo "FAIL: greet.sh $* printed '$got', want '$want'"
		fail=1
	fi
}
check "hello, world"
exit $fail
