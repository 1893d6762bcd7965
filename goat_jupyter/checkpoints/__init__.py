"""Per-run checkpoints: before-images of what a %%goat run changes, and reverting them."""
