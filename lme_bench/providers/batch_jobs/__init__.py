"""Provider batch APIs: many requests sent as one job, answered within hours at a lower price."""
