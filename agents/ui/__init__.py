"""Ways to watch and play: the pygame play window and the HTML replay page."""
