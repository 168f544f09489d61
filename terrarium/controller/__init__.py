"""One creature's turn loop: assembly from config, the incoming-message renderer, the loop."""
