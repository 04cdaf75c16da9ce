package schema

import (
	"fmt"
	"strings"

	"sanitizer/fault"
)

// Where is the place of the configuration key at path, for messages: "FILE:LINE: path",
// at the line of the key, or of its nearest enclosing key the file gives (a default's
// section); "FILE: path" when the configuration was not parsed from a file's lines.
func (c *Config) Where(path string) string {
	if line := c.line(path); line > 0 {
		return fmt.Sprintf("%s:%d: %s", c.Name(), line, path)
	}
	return c.Name() + ": " + path
}

// line is the line of path or of its nearest enclosing key, 0 when none is known.
func (c *Config) line(path string) int {
	for p := path; p != ""; {
		if line, ok := c.lines[p]; ok {
			return line
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return 0
}

// Errorf returns bad input "FILE:LINE: path: message" about the key at path.
func (c *Config) Errorf(path, format string, a ...any) error {
	return c.Wrap(path, fault.BadInput(format, a...))
}

// Wrap returns err placed at the configuration key path ("FILE:LINE: path: " and err's
// message); it keeps err's kind.
func (c *Config) Wrap(path string, err error) error {
	return &positioned{c.line(path), fmt.Errorf("%s: %w", c.Where(path), err)}
}

// RequirementKey is the key path of the requirement of privacy model model
// ("l-diversity", "t-closeness" or "beta-likeness") on column: "privacy.l-diversity",
// or "privacy.l-diversity[i]" when the configuration lists them.
func (c *Config) RequirementKey(model, column string) string {
	key := "privacy." + model
	if _, list := c.lines[key+"[0]"]; !list {
		return key
	}
	var cols []string
	switch model {
	case "l-diversity":
		for _, r := range c.Privacy.LDiversity {
			cols = append(cols, r.Column)
		}
	case "t-closeness":
		for _, r := range c.Privacy.TCloseness {
			cols = append(cols, r.Column)
		}
	case "beta-likeness":
		for _, r := range c.Privacy.BetaLikeness {
			cols = append(cols, r.Column)
		}
	}
	for i, col := range cols {
		if col == column {
			return index(key, i)
		}
	}
	return key
}
