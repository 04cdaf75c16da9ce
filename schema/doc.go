// Package schema holds the release configuration: its YAML format (decoded strictly:
// unknown keys are errors), validation and defaults, the roles and types of columns,
// and the error kinds that the command line maps to exit statuses.
package schema
