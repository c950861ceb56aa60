"""everyo.optim"""

__all__: list[str] = []
