"""everyo.data"""

__all__: list[str] = []
