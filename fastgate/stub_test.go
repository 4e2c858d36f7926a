package fastgate

import "testing"

func TestCheckStub(t *testing.T) {
	for _, tc := range []struct {
		command string
		stub    bool
	}{
		{"", true},
		{"   ", true},
		{"true", true},
		{":", true},
		{"/bin/true", true},
		{"echo ok", true},
		{"echo", true},
		{"printf 'fine\\n'", true},
		{"exit 0", true},
		{"true && echo done", true},
		{"true; :", true},
		{"sh -c 'true'", true},
		{`bash -c "echo ok; true"`, true},
		{"( true )", true},
		{"go build ./... && go vet ./...", false},
		{"make check", false},
		{"echo start && go vet ./...", false},
		{"sh -c 'go build ./...'", false},
		{"test -f go.mod", false},
		{"false", false},
		{"truecrypt --check", false},
	} {
		err := CheckStub(tc.command)
		if (err != nil) != tc.stub {
			t.Errorf("CheckStub(%q) = %v, want stub %v", tc.command, err, tc.stub)
		}
	}
}
