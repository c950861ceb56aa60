"""everyo.nn"""

__all__: list[str] = []
