package index

// Options tune the index. New uses DefaultOptions; the figures behind the
// defaults are in TUNING.md.
type Options struct {
	// Boosts per field (BM25F field weights). A zero boost leaves the field
	// out of the index altogether: ServerDescriptionBoost is 0 by default
	// because long, promotional server descriptions shared by all of a
	// server's tools cost more precision than they add (TUNING.md).
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
	// Stemmer is StemPorter, StemSnowball, StemPlural or "" (none).
	Stemmer string
	// SynonymWeight is the weight of a verb synonym added to the query
	// relative to the word itself; 0 disables synonyms.
	SynonymWeight float64
	// StemVariants is the query weight of the indexed words that share a
	// query word's Porter stem ("published" and "publishing" for
	// "publish", "limit" for "limited"). Indexing with plural-only
	// stemming keeps "forecast" and "forecasting" apart, which ranks
	// better than conflating them (TUNING.md); the variants bring the
	// recall of full stemming back at reduced weight. 0 disables them.
	StemVariants float64

	// NameMention multiplies the score of a tool by 1 + NameMention when
	// the query spells its (multi-word) name, as in "... using
	// todoist_get_tasks".
	NameMention float64
	// NamePhrase multiplies the score of a tool by 1 + NamePhrase when
	// the request says its multi-word name in its own words, in order and
	// at most two words apart ("create a new note" for create_note,
	// "search entities" for search_entities): the request asks for what
	// the name says. Names are looked for in the first 256 words of a
	// request. 0 disables it.
	NamePhrase float64
	// Bigrams is the query weight of a pair of adjacent query words that
	// also stand next to each other in a tool's name, title or description
	// ("delete link", "create directory"): a cheap proximity signal. 0
	// disables bigrams (and does not index them).
	Bigrams float64
	// SynonymPairs is the weight, relative to Bigrams, of a pair of
	// adjacent request words in which one word is replaced by one of its
	// synonyms:
	// "retrieve the top ..." also looks for the pair get+top that the tool
	// get_top_etfs holds, "save it to a file" for write+file. Requests and
	// tool names often use different verbs for the same action; the pair
	// keeps the verb tied to its object, where a lone synonym matches any
	// tool with that verb. 0 disables synonym pairs.
	SynonymPairs float64
	// FilePaths reads a file system path with an extension in a request
	// ("/root/markdown/report.md") as the word "file" in front of the path,
	// for word pairs only, so the verb before it pairs with "file" ("save
	// it in /root/x.md" -> save+file, and through SynonymPairs write+file):
	// a path names a file without saying "file".
	FilePaths bool
	// BigramWindow also pairs words up to this many positions apart
	// ("list open issues" pairs list+issues at 2); 1 is adjacent only.
	BigramWindow int
	// DropNumbers leaves out words made only of digits: in requests they
	// are values (IDs, dates, counts) that match unrelated example values
	// in descriptions.
	DropNumbers bool
	// MinWordLen leaves out shorter words (single letters from split
	// identifiers and abbreviations).
	MinWordLen int

	// K1 is BM25's term-frequency saturation, B its length normalization.
	K1 float64
	B  float64
}

// Stemmers for Options.Stemmer.
const (
	StemPorter   = "porter"   // Porter (1980): "forecasts", "forecasting" -> forecast
	StemSnowball = "snowball" // Porter2, slightly less aggressive
	StemPlural   = "plural"   // plurals only
)

// DefaultOptions are the tuned defaults (see TUNING.md).
func DefaultOptions() Options {
	return Options{
		NameBoost:              3,
		TitleBoost:             2,
		DescriptionBoost:       1,
		ServerBoost:            1,
		ServerDescriptionBoost: 0,
		ParamNameBoost:         0.5,
		ParamDescriptionBoost:  0.3,
		StopWords:              true,
		Stemmer:                StemPlural,
		SynonymWeight:          0.5,
		StemVariants:           0.5,
		NameMention:            1,
		NamePhrase:             0.1,
		Bigrams:                0.35,
		BigramWindow:           2,
		SynonymPairs:           1.5,
		FilePaths:              true,
		DropNumbers:            true,
		MinWordLen:             1,
		K1:                     1.2,
		B:                      0.75,
	}
}

// fields lists the indexed fields with their boosts; bigrams are indexed in
// the fields that describe what the tool does.
func (o Options) fields() []weightedField {
	all := []weightedField{
		{fieldName, o.NameBoost, true},
		{fieldTitle, o.TitleBoost, true},
		{fieldDesc, o.DescriptionBoost, true},
		{fieldServer, o.ServerBoost, false},
		{fieldServerDesc, o.ServerDescriptionBoost, false},
		{fieldParamName, o.ParamNameBoost, false},
		{fieldParamDesc, o.ParamDescriptionBoost, false},
	}
	out := all[:0]
	for _, f := range all {
		if f.boost > 0 {
			out = append(out, f)
		}
	}
	return out
}
