"""LongMemEval datasets: models, loaders, leak-safe views, the bundled sample and a scale
generator."""
