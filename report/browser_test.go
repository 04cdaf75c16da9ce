//go:build unix

package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBrowserRendersReports renders every test page to ../out/browser (one of each
// kind unless SANITIZE_BROWSER_REQUIRED=1, as make browser-test sets), opens each in
// headless Chromium, and checks that it loads nothing, raises no error, and draws every
// chart at a size with all its text inside it and no two texts on top of each other;
// then it saves a screenshot of each page beside it.
func TestBrowserRendersReports(t *testing.T) {
	bin, why := chromium()
	if bin == "" {
		if os.Getenv("SANITIZE_BROWSER_REQUIRED") == "1" {
			t.Fatalf("no Chromium found, and SANITIZE_BROWSER_REQUIRED=1: %s", why)
		}
		t.Skip("no Chromium found (make browser-test installs it): " + why)
	}
	out, err := filepath.Abs(filepath.Join("..", "out", "browser"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	// Under make test (not required) one page of each kind, to spare the suite's time;
	// make browser-test opens every page.
	all := os.Getenv("SANITIZE_BROWSER_REQUIRED") == "1"
	seen := map[string]bool{}
	for _, tc := range htmlCases() {
		kind, _, _ := strings.Cut(tc.name, "-")
		if !all && seen[kind] {
			continue
		}
		seen[kind] = true
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.render(&b); err != nil {
				t.Fatal(err)
			}
			page := filepath.Join(out, tc.name+".html")
			if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			p := probePage(t, bin, b.String())
			checkProbe(t, p, strings.Count(b.String(), "<svg"))
			shot := filepath.Join(out, tc.name+".png")
			screenshot(t, bin, page, shot, p.Height)
			t.Logf("%s: %d charts; screenshot %s", tc.name, len(p.SVGs), shot)
		})
	}
}

// chromium is the Chromium binary to run, or "" and where it was looked for.
func chromium() (string, string) {
	if b := os.Getenv("SANITIZE_CHROMIUM"); b != "" {
		return b, ""
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium", ""
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, ""
		}
	}
	return "", "not in SANITIZE_CHROMIUM, /usr/bin/chromium, or chromium or chromium-browser on PATH"
}

// probe is what the probe script found in a page.
type probe struct {
	Errors    []string `json:"errors"`
	Resources []string `json:"resources"`
	SVGs      []struct {
		Title string  `json:"title"`
		W     float64 `json:"w"`
		H     float64 `json:"h"`
	} `json:"svgs"`
	Outside []string `json:"outside"`
	Overlap []string `json:"overlap"`
	Height  int      `json:"height"`
}

// probeScript records errors and, after load, the resources loaded, the size of every
// chart, the texts that stick out of their chart, and the texts that overlap.
const probeScript = `<script>
(function () {
  var errors = [];
  window.addEventListener('error', function (e) { errors.push(String(e.message || (e.target && e.target.outerHTML) || e)); }, true);
  window.addEventListener('unhandledrejection', function (e) { errors.push('unhandled rejection: ' + e.reason); });
  window.addEventListener('load', function () {
    var out = {errors: errors, resources: [], svgs: [], outside: [], overlap: [], height: 0};
    try {
      out.resources = performance.getEntriesByType('resource').map(function (r) { return r.name; });
      out.height = Math.ceil(document.documentElement.scrollHeight);
      document.querySelectorAll('svg').forEach(function (s) {
        var r = s.getBoundingClientRect();
        var title = s.querySelector('title') ? s.querySelector('title').textContent : '(untitled)';
        out.svgs.push({title: title, w: r.width, h: r.height});
        var boxes = [];
        s.querySelectorAll('text').forEach(function (t) {
          var b = t.getBoundingClientRect();
          var txt = t.lastChild ? t.lastChild.textContent : '';
          if (b.width === 0 || b.height === 0) { return; }
          if (b.left < r.left - 0.5 || b.top < r.top - 0.5 || b.right > r.right + 0.5 || b.bottom > r.bottom + 0.5) {
            out.outside.push(title + ': "' + txt + '"');
          }
          boxes.push({b: b, t: txt});
        });
        for (var i = 0; i < boxes.length; i++) {
          for (var j = i + 1; j < boxes.length; j++) {
            var p = boxes[i].b, q = boxes[j].b;
            if (p.left < q.right - 1 && q.left < p.right - 1 && p.top < q.bottom - 1 && q.top < p.bottom - 1) {
              out.overlap.push(title + ': "' + boxes[i].t + '" and "' + boxes[j].t + '"');
            }
          }
        }
      });
    } catch (e) { out.errors.push('probe: ' + e); }
    var pre = document.createElement('pre');
    pre.id = 'probe';
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  });
})();
</script>`

var probeRE = regexp.MustCompile(`(?s)<pre id="probe">(.*?)</pre>`)

// probePage opens a copy of page with the probe script in it and returns what the
// probe found.
func probePage(t *testing.T, bin, page string) probe {
	t.Helper()
	i := strings.LastIndex(page, "</body>")
	if i < 0 {
		t.Fatal("page has no </body>")
	}
	f := filepath.Join(t.TempDir(), "probe.html")
	if err := os.WriteFile(f, []byte(page[:i]+probeScript+page[i:]), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _ := runChromium(t, bin, "--dump-dom", "--window-size=1280,1000", "file://"+f)
	m := probeRE.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("the probe wrote nothing; the dumped page:\n%.2000s", stdout)
	}
	var p probe
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &p); err != nil {
		t.Fatalf("the probe's output: %v: %s", err, m[1])
	}
	return p
}

// checkProbe fails on anything the probe found wrong in a page of n charts.
func checkProbe(t *testing.T, p probe, n int) {
	t.Helper()
	for _, e := range p.Errors {
		t.Errorf("page error: %s", e)
	}
	for _, r := range p.Resources {
		t.Errorf("page loaded %s", r)
	}
	if len(p.SVGs) != n {
		t.Errorf("the browser found %d charts, the page holds %d", len(p.SVGs), n)
	}
	for _, s := range p.SVGs {
		if s.W < 100 || s.H < 60 {
			t.Errorf("chart %q is drawn %.0f×%.0f px", s.Title, s.W, s.H)
		}
	}
	for _, o := range p.Outside {
		t.Errorf("text sticks out of its chart: %s", o)
	}
	for _, o := range p.Overlap {
		t.Errorf("texts overlap: %s", o)
	}
}

// screenshot saves a screenshot of page, height px tall, to shot.
func screenshot(t *testing.T, bin, page, shot string, height int) {
	t.Helper()
	height = min(max(height+40, 600), 16000)
	_ = os.Remove(shot)
	runChromium(t, bin, "--screenshot="+shot, "--hide-scrollbars", fmt.Sprintf("--window-size=1280,%d", height), "file://"+page)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil || cfg.Width < 1000 || cfg.Height < 600 {
		t.Errorf("screenshot %s: %v, %d×%d px", shot, err, cfg.Width, cfg.Height)
	}
}

// consoleRE matches a console message in Chromium's log ("…:INFO:CONSOLE:1] "msg", source: …"):
// the pages run no script and the probe logs nothing, so any message is an error.
var consoleRE = regexp.MustCompile(`:CONSOLE[:(]|Uncaught`)

// runChromium runs headless Chromium with args, in a user-data folder of its own,
// under a timeout, and fails the test on a console message; it returns the output.
func runChromium(t *testing.T, bin string, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--disable-extensions", "--mute-audio", "--enable-logging=stderr", "--v=0", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // so that a timeout ends its helpers too
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("chromium %s: timed out after 90s; its log:\n%s", strings.Join(args, " "), tail(stderr.String()))
	}
	if err != nil {
		t.Fatalf("chromium %s: %v; its log:\n%s", strings.Join(args, " "), err, tail(stderr.String()))
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if consoleRE.MatchString(line) {
			t.Errorf("console error: %s", line)
		}
	}
	return stdout.String(), stderr.String()
}

// tail is the last lines of a log.
func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-30):], "\n")
}
