package spec

import "flag"

var update = flag.Bool("update", false, "rewrite testdata/default.golden")
