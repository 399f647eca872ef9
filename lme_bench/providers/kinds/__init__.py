"""One class per provider kind (lme_bench.providers.kinds.base.Provider), listed in
lme_bench.providers.registry."""
