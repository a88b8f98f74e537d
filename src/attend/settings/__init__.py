"""Settings: every sensor field as a key, resolved through the layers; copy, rename and delete."""
