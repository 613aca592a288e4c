"""Fine-tuning: task metrics and evaluation (see README.md here)."""
