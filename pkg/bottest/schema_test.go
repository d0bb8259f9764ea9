package bottest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/xeipuuv/gojsonschema"

	"github.com/parleyhq/parley/configs"
	"github.com/parleyhq/parley/pkg/bottest"
)

// The editors' schema and the parser agree on the example test files.
func TestExampleTestFilesMatchTheSchema(t *testing.T) {
	schema, err := gojsonschema.NewSchema(gojsonschema.NewBytesLoader(configs.BotTestsSchema))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../../tenants/*/tests/*.json")
	if len(files) < 3 {
		t.Fatalf("found %d example test files, want at least 3", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		res, err := schema.Validate(gojsonschema.NewBytesLoader(data))
		if err != nil || !res.Valid() {
			t.Errorf("%s: schema: %v %v", f, err, res.Errors())
		}
		if _, err := bottest.Parse(data); err != nil {
			t.Errorf("%s: parse: %v", f, err)
		}
	}
}
