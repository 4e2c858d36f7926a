package gitext

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Now is the time git would stamp a commit with: GIT_COMMITTER_DATE when
// set (so tests and replays are reproducible), else the clock.
func Now() (time.Time, error) {
	v := strings.TrimSpace(os.Getenv("GIT_COMMITTER_DATE"))
	if v == "" {
		return time.Now(), nil
	}
	t, err := ParseDate(v)
	if err != nil {
		return time.Time{}, fmt.Errorf("GIT_COMMITTER_DATE: %w", err)
	}
	return t, nil
}

// ParseDate accepts git's internal form ("@1700000000 +0100" or without the
// @) and ISO 8601 / RFC 3339 forms ("2026-11-22T10:00:00Z", "2026-11-22
// 10:00:00 +0100", no zone meaning UTC).
func ParseDate(v string) (time.Time, error) {
	secs, zone, _ := strings.Cut(strings.TrimPrefix(v, "@"), " ")
	if n, err := strconv.ParseInt(secs, 10, 64); err == nil && (v[0] == '@' || len(secs) >= 9) {
		t := time.Unix(n, 0).UTC()
		if loc, ok := parseZone(zone); ok {
			t = t.In(loc)
		}
		return t, nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05 -0700",
		"2006-01-02T15:04:05 -0700", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("unsupported date format %q", v)
}

func parseZone(z string) (*time.Location, bool) {
	if len(z) != 5 || (z[0] != '+' && z[0] != '-') {
		return nil, false
	}
	h, err1 := strconv.Atoi(z[1:3])
	m, err2 := strconv.Atoi(z[3:5])
	if err1 != nil || err2 != nil {
		return nil, false
	}
	off := h*3600 + m*60
	if z[0] == '-' {
		off = -off
	}
	return time.FixedZone(z, off), true
}

// Signature formats "Name <email> <unix> <zone>" as in commit headers.
func Signature(name, email string, t time.Time) string {
	return fmt.Sprintf("%s <%s> %d %s", name, email, t.Unix(), t.Format("-0700"))
}
