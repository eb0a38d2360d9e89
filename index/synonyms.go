package index

// synonymGroups are verbs (and a few nouns) that tool authors and users use
// interchangeably. Each word of a group stands for the others.
func synonymGroups() [][]string {
	return [][]string{
		{"get", "fetch", "retrieve", "obtain"},
		{"create", "add", "make", "insert"},
		{"delete", "remove", "erase", "destroy"},
		{"update", "edit", "modify", "change"},
		{"search", "find", "query", "lookup"},
		{"run", "execute", "invoke", "launch"},
		{"list", "enumerate"},
		{"write", "save", "store"},
		{"stop", "terminate", "kill", "cancel"},
		{"image", "picture", "photo"},
	}
}

// buildSynonyms maps each analyzed synonym term to the analyzed terms of the
// other words of its group (words the analyzer drops are skipped).
func buildSynonyms(an *analyzer, opts Options) map[string][]string {
	if opts.SynonymWeight <= 0 {
		return nil
	}
	out := make(map[string][]string)
	for _, g := range synonymGroups() {
		var terms []string
		for _, w := range g {
			if t := an.terms(w); len(t) == 1 {
				terms = append(terms, t[0])
			}
		}
		for _, t := range terms {
			for _, o := range terms {
				if o != t {
					out[t] = append(out[t], o)
				}
			}
		}
	}
	return out
}
