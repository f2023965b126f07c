"""The flow language: YAML loading, validation, durations, instants and expressions."""
