"""Runtime: the trio daemon, the kinds, engagement, governor, delivery and the store."""
