package runpage

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// browserInstall is how .ci/run installs the browser the test drives.
const browserInstall = "DEBIAN_FRONTEND=noninteractive apt-get update -qq && apt-get install -y -qq chromium"

// browser is the headless Chromium to drive: $CRUCIBLE_CHROMIUM, else
// chromium on PATH. In CI (CI=true) a missing one fails the test; here it
// skips, naming the install.
func browser(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("CRUCIBLE_CHROMIUM"), "chromium", "chromium-browser"} {
		if name == "" {
			continue
		}
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("no chromium on PATH, which CI must have: %s", browserInstall)
	}
	t.Skipf("no chromium on PATH; install it with: %s", browserInstall)
	return ""
}

// artifacts is where the screenshots go: $CRUCIBLE_TEST_ARTIFACTS, or a
// directory of the test's own.
func artifacts(t *testing.T) string {
	dir := os.Getenv("CRUCIBLE_TEST_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	dir = filepath.Join(dir, "report")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestBrowser opens the fixture's page from a file:// URL in headless
// Chromium at a desktop's and a phone's size: no console message, no
// request but the page's own, every section shown; a screenshot of each
// section is written as a test artifact.
func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no browser")
	}
	bin := browser(t)
	f := newFixture(t, 0, "")
	_, page := f.page(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	url := "file://" + file
	shots := artifacts(t)

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true), chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()

	for _, size := range []struct {
		name string
		w, h int64
		mob  bool
	}{{"desktop", 1280, 800, false}, {"phone", 390, 844, true}} {
		t.Run(size.name, func(t *testing.T) {
			bctx, cancelTab := chromedp.NewContext(actx)
			defer cancelTab()
			var mu sync.Mutex
			var requests, console []string
			err := chromedp.Listen(bctx, func(ev any) {
				mu.Lock()
				defer mu.Unlock()
				switch e := ev.(type) {
				case *network.EventRequestWillBeSent:
					requests = append(requests, e.Request.URL)
				case *runtime.EventConsoleAPICalled:
					var args []string
					for _, a := range e.Args {
						args = append(args, fmt.Sprint(a.Value, a.Description))
					}
					console = append(console, fmt.Sprintf("%s: %s", e.Type, strings.Join(args, " ")))
				case *runtime.EventExceptionThrown:
					console = append(console, "exception: "+e.ExceptionDetails.Text)
				case *log.EventEntryAdded:
					console = append(console, fmt.Sprintf("log %s (%s): %s %s", e.Entry.Level, e.Entry.Source, e.Entry.Text, e.Entry.URL))
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			emulate := []chromedp.EmulateViewportOption{chromedp.EmulateScale(1)}
			if size.mob {
				emulate = append(emulate, chromedp.EmulateMobile)
			}
			if err := chromedp.Do(bctx, chromedp.EmulateViewport(size.w, size.h, emulate...), chromedp.Navigate(url),
				chromedp.WaitReady(chromedp.CSS("#journal"))); err != nil {
				t.Fatal(err)
			}
			visible, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("section")).filter(s => {
					const r = s.getBoundingClientRect(); const st = getComputedStyle(s);
					return r.width > 0 && r.height > 0 && st.display != "none" && st.visibility != "hidden" && r.left >= 0 && r.right <= window.innerWidth + 1;
				}).map(s => s.id)`))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(visible, " ") != strings.Join(Sections, " ") {
				t.Errorf("sections visible within %dpx: %v, want %v", size.w, visible, Sections)
			}
			scrollW, err := chromedp.Run(bctx, chromedp.Evaluate[int64](`document.documentElement.scrollWidth`))
			if err != nil {
				t.Fatal(err)
			}
			if scrollW > size.w {
				t.Errorf("the page is %dpx wide at %dpx: it scrolls sideways", scrollW, size.w)
			}
			for _, id := range Sections {
				if err := chromedp.Do(bctx, chromedp.ScrollIntoView(chromedp.ID(id))); err != nil {
					t.Fatalf("scroll to %s: %v", id, err)
				}
				shot, err := chromedp.Run(bctx, chromedp.Screenshot(chromedp.ID(id)))
				if err != nil {
					t.Fatalf("screenshot of %s: %v", id, err)
				}
				path := filepath.Join(shots, fmt.Sprintf("%s-%s.png", size.name, id))
				if err := os.WriteFile(path, shot, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("screenshot: %s", path)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, r := range requests {
				if r != url {
					t.Errorf("the page requested %s", r)
				}
			}
			if len(requests) == 0 {
				t.Error("no request seen: the network domain's events are not recorded")
			}
			for _, c := range console {
				t.Errorf("console: %s", c)
			}
		})
	}
}
