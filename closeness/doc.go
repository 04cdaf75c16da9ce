// Package closeness will hold the t-closeness distances (equal, ordered and
// hierarchical Earth Mover's Distance). Nothing is implemented yet: a configuration that
// asks for t-closeness is refused by the release.
package closeness
