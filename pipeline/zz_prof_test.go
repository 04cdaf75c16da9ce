package pipeline

import (
	"context"
	"os"
	"testing"

	"sanitizer/schema"
)

func BenchmarkZZReleaseFile(b *testing.B) {
	cfg, err := schema.Load(os.Getenv("ZZ_CFG"))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Release(context.Background(), cfg, Options{Input: os.Getenv("ZZ_IN"), Output: os.Getenv("ZZ_OUT"), Force: true}); err != nil {
			b.Fatal(err)
		}
	}
}
