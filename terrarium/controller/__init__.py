"""One creature's turn loop: assembly from config, the incoming-message renderer, the loop."""


__all__: list[str] = []
