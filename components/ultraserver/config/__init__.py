"""The stack settings model and its derived views; imports only facts."""
