"""The history of Evals along git: per commit that changed an Eval or its results, each
config x model's figures as `report --rev` counts them (what `smevals log` prints and the
site's History page draws)."""
