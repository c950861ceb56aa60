"""Sampling: the stack sampler, the sampled stacks of a run, which event each sample belongs
to, and the hot lines that say why an event is slow."""
