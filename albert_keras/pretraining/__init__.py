"""Pretraining: data creation (SOP + n-gram masking), records and the run.

See README.md here.
"""
