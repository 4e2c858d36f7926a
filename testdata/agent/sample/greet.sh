#!/bin/sh
# greet: say hello.
echo "hello, world"
