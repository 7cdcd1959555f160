"""Prefect flows: the study DAG (full_study) and one flow per stage so each can run alone."""
