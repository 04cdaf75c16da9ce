package build

import "runtime/debug"

// Version is the tool's version as the build recorded it, written into reports,
// manifests and release metadata: the module's version when built from a tagged
// module, else "devel" with the commit (and "-modified" for a build from a changed
// work tree) when the build recorded it.
var Version = buildVersion()

// buildVersion reads Version from the binary's build information.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return versionOf(info)
}

// versionOf is the version that info describes.
func versionOf(info *debug.BuildInfo) string {
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	v := "devel"
	var modified bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v += "-" + s.Value[:min(len(s.Value), 12)]
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified {
		v += "-modified"
	}
	return v
}
