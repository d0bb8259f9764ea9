package configs

import _ "embed"

//go:embed models.json
var modelsJSON string

// Models returns the default model catalog (configs/models.json), the input of
// llm.LoadCatalog: context windows, output limits and USD prices per million
// tokens. Prices are the providers' published list prices; review them before
// billing anyone by them.
func Models() []byte { return []byte(modelsJSON) }
