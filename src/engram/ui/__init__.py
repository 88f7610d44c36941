"""`engram ui`: a local review page (standard-library HTTP server, one static page)."""
