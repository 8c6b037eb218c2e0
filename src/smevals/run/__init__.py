"""Attempting Tasks with Runners: plan, launch, record."""
