// Package layout holds the tests of the code's layout: which packages
// stay pure (link nothing that runs git), so that a reader can trust a
// package's word about itself.
package layout
