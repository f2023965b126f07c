"""tarry: a durable workflow engine whose core competence is waiting."""
