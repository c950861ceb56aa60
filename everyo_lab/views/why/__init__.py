"""The why panel: the sampled hot lines of a row or an event, live and static."""
