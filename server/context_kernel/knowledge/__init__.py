"""The knowledge base: chunking, indexing and searching what is kept out of the conversation."""
