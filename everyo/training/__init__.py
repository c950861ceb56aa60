"""everyo.training"""

__all__: list[str] = []
