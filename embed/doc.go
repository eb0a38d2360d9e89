// Package embed turns texts into vectors through an embeddings endpoint,
// for the hub's hybrid tool search and the chat loop's tool preselection.
//
// The model: a Config names one endpoint (provider, model, base_url,
// api_key, timeout). A Client speaks one of two wire formats to it:
//
//   - Ollama: POST <base_url>/api/embed {"model", "input": [...]} answered
//     by {"embeddings": [[...], ...]};
//   - OpenAI-compatible (OpenAI, vLLM, TEI, LM Studio, Ollama's /v1):
//     POST <base_url>/embeddings {"model", "input": [...]} answered by
//     {"data": [{"index", "embedding"}, ...]}.
//
// Texts go in batches (BatchSize per request); every answer is checked
// (one finite vector per input, all of one dimension) and read through a
// size bound. The API key is sent only to base_url's origin: a redirect
// elsewhere is refused, and the key is scrubbed from every error.
//
// Tool texts change rarely and cost a model call each, so their vectors
// are kept in a Cache: one file per model in the hub's state folder,
// keyed by a hash of the model and the text, written atomically and
// bounded in size (MaxCacheBytes). A restart with the same catalog asks
// the endpoint nothing; a changed tool is embedded again.
//
// Vectors come back normalised to unit length, so that cosine similarity
// is a dot product (Cosine, Dot).
package embed
