"""Semantic recall (the `semantic` install extra): dense vectors of indexed chunks, fused with words.

`status` and `startup` (the server starting recall in the background) need nothing of the extra; every
other module here imports numpy and is imported only once `status.probe` said the extra is there.
"""
