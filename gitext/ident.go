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
// 10:00:00 +0100", no zone meaning local time, as for git), each read as
// git reads GIT_COMMITTER_DATE; it is a subset of what git takes.
func ParseDate(v string) (time.Time, error) {
	if t, ok := internalDate(v); ok {
		return t, nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05 -0700",
		"2006-01-02T15:04:05 -0700", "2006-01-02 15:04:05"} {
		t, err := time.ParseInLocation(layout, v, time.Local)
		if strings.HasSuffix(layout, "-0700") && err == nil {
			if _, ok := parseZone(v[len(v)-5:]); !ok {
				continue // Go takes "+0060" for +0100; git ignores it
			}
		}
		// git's calendar runs from 1970 to 2099
		if err == nil && t.Year() >= 1970 && t.Year() <= 2099 {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("unsupported date format %q", v)
}

// internalDate reads "<seconds> <zone>": git takes any count of seconds
// after an '@', and without one a count of at least nine digits' worth
// that falls before 2100.
func internalDate(v string) (time.Time, bool) {
	rest, at := strings.CutPrefix(v, "@")
	secs, zone, _ := strings.Cut(rest, " ")
	if secs == "" || strings.Trim(secs, "0123456789") != "" {
		return time.Time{}, false
	}
	n, err := strconv.ParseInt(secs, 10, 64)
	loc, ok := parseZone(zone)
	if err != nil || !ok || !at && (n < 100000000 || n >= 4102444800) {
		return time.Time{}, false
	}
	return time.Unix(n, 0).In(loc), true
}

func parseZone(z string) (*time.Location, bool) {
	if len(z) != 5 || (z[0] != '+' && z[0] != '-') || strings.Trim(z[1:], "0123456789") != "" {
		return nil, false
	}
	h, _ := strconv.Atoi(z[1:3])
	m, _ := strconv.Atoi(z[3:5])
	if h >= 24 || m >= 60 {
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
