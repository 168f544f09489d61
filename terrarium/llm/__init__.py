"""Models: the OpenAI-compatible streaming client, the embedded llama.cpp server, scripts."""
