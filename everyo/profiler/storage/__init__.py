"""Storage: the columnar event store, runs and their registry, event batches (what readers and
analysis see), and loading an export back into a run."""
