package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// synopsis is README.md's command synopsis: the fenced block of the command lines,
// each line with its comment ("  # …") cut and its spaces made single.
func synopsis(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(data), "```")[1:] {
		if !strings.HasPrefix(block, "\nsanitize ") {
			continue
		}
		var lines []string
		for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
			if i := strings.Index(line, "  #"); i >= 0 {
				line = line[:i]
			}
			lines = append(lines, strings.Join(strings.Fields(line), " "))
		}
		return lines
	}
	t.Fatal("README.md has no synopsis block (a fenced block starting with a sanitize command line)")
	return nil
}

// helpOf is the text sanitize args… --help prints.
func helpOf(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := runCLI(t, append(args, "--help")...)
	if code != 0 {
		t.Fatalf("%v --help: exit %d: %s", args, code, stderr)
	}
	return stdout
}

// listed is what a synopsis line lists after its label ("models (release, check): …"):
// the commands it is for and its items (split at commas, semicolons, colons and
// parentheses).
func listed(t *testing.T, line string) (commands, items []string) {
	t.Helper()
	m := regexp.MustCompile(`^[a-z ]+\(([a-z, ]+)\): (.+)$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("README.md synopsis: %q is not \"label (commands): items\"", line)
	}
	split := func(s, seps string) []string {
		var out []string
		for _, f := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(seps, r) }) {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
		return out
	}
	return split(m[1], ","), split(m[2], ",;:()")
}

// TestHelpMatchesReadme: every command's --help shows the command line README.md's
// synopsis gives it, word for word, and every flag the command takes is on that line;
// every global flag (and its values) is on the synopsis's global line and in every
// command's --help; and the models and formats the synopsis lists are in the --help of
// the commands it lists them for. So neither can change without the other.
func TestHelpMatchesReadme(t *testing.T) {
	root := newRoot(io.Discard, &globals{})
	commands := map[string]*cobra.Command{}
	for _, c := range root.Commands() {
		commands[c.Name()] = c
	}
	seen := map[string]bool{}
	for _, line := range synopsis(t) {
		words := strings.Fields(line)
		switch {
		case line == "sanitize --version":
			if root.Flags().Lookup("version") == nil && !strings.Contains(helpOf(t), "--version") {
				t.Errorf("README.md lists sanitize --version, which sanitize does not take")
			}
		case words[0] == "sanitize":
			c := commands[words[1]]
			if c == nil {
				t.Errorf("README.md lists %q, which is not a sanitize command", line)
				continue
			}
			seen[c.Name()] = true
			if want := "sanitize " + strings.Join(strings.Fields(c.Use), " "); line != want {
				t.Errorf("%s: README.md says\n\t%s\nits --help says\n\t%s", c.Name(), line, want)
			}
			if help := helpOf(t, c.Name()); !strings.Contains(help, "sanitize "+c.Use) {
				t.Errorf("%s --help does not show its command line %q:\n%s", c.Name(), c.Use, help)
			}
			c.LocalFlags().VisitAll(func(f *pflag.Flag) {
				if f.Name != "help" && !slices.ContainsFunc(words, func(w string) bool { return strings.Contains(w, "--"+f.Name) || w == "-"+f.Shorthand }) {
					t.Errorf("%s takes --%s, which README.md's synopsis line does not list: %s", c.Name(), f.Name, line)
				}
			})
		case strings.HasPrefix(line, "global flags:"):
			checkGlobalFlags(t, root, commands, line)
		default:
			names, items := listed(t, line)
			for _, name := range names {
				help := helpOf(t, name)
				for _, item := range items {
					if !strings.Contains(help, item) {
						t.Errorf("README.md's synopsis lists %q (%s), which %s --help does not", item, strings.Fields(line)[0], name)
					}
				}
			}
		}
	}
	for name, c := range commands {
		if !seen[name] && !c.Hidden && name != "help" && name != "completion" {
			t.Errorf("sanitize %s is not in README.md's synopsis", name)
		}
	}
}

// checkGlobalFlags: every flag on the synopsis's global line, and the values it lists
// (text|json), is in every command's --help; every persistent flag is on that line.
func checkGlobalFlags(t *testing.T, root *cobra.Command, commands map[string]*cobra.Command, line string) {
	t.Helper()
	root.PersistentFlags().VisitAll(func(f *pflag.Flag) {
		if !strings.Contains(line, "--"+f.Name) {
			t.Errorf("sanitize takes the global flag --%s, which README.md's global line does not list: %s", f.Name, line)
		}
	})
	var want []string
	for _, w := range strings.Fields(line) {
		if strings.HasPrefix(w, "--") {
			want = append(want, w)
		} else if strings.Contains(w, "|") {
			want = append(want, strings.Split(w, "|")...)
		}
	}
	for name := range commands {
		if name == "help" || name == "completion" {
			continue
		}
		help := helpOf(t, name)
		for _, w := range want {
			if !strings.Contains(help, w) {
				t.Errorf("README.md's global line lists %s, which %s --help does not", w, name)
			}
		}
	}
}
