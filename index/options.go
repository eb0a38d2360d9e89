package index

// Options tune the index. New uses DefaultOptions; the figures behind the
// defaults are in TUNING.md.
type Options struct {
	// Query-time boosts per field. A zero boost leaves the field out of
	// the index altogether.
	NameBoost              float64
	TitleBoost             float64
	DescriptionBoost       float64
	ServerBoost            float64
	ServerDescriptionBoost float64
	ParamNameBoost         float64
	ParamDescriptionBoost  float64

	// StopWords drops English stop words and request phrasing ("please",
	// "want") from documents and queries.
	StopWords bool
	// Stem applies the Porter stemmer ("forecasts" matches "forecast").
	Stem bool
	// SynonymWeight is the weight of a verb synonym added to the query
	// relative to the word itself; 0 disables synonyms.
	SynonymWeight float64
	// K1 is BM25's term-frequency saturation, B its length normalization.
	K1 float64
	B  float64
}

// DefaultOptions are the tuned defaults (see TUNING.md).
func DefaultOptions() Options {
	return Options{
		NameBoost:              3,
		TitleBoost:             2,
		DescriptionBoost:       1,
		ServerBoost:            1,
		ServerDescriptionBoost: 0.3,
		ParamNameBoost:         0.5,
		ParamDescriptionBoost:  0.3,
		StopWords:              true,
		Stem:                   true,
		SynonymWeight:          0.5,
		K1:                     1.2,
		B:                      0.75,
	}
}

// fields lists the indexed fields with their boosts, in a fixed order (the
// order defines the bits of Index.termMask, at most 8).
func (o Options) fields() []weightedField {
	all := []weightedField{
		{fieldName, o.NameBoost},
		{fieldTitle, o.TitleBoost},
		{fieldDesc, o.DescriptionBoost},
		{fieldServer, o.ServerBoost},
		{fieldServerDesc, o.ServerDescriptionBoost},
		{fieldParamName, o.ParamNameBoost},
		{fieldParamDesc, o.ParamDescriptionBoost},
	}
	out := all[:0]
	for _, f := range all {
		if f.boost > 0 {
			out = append(out, f)
		}
	}
	return out
}
