"""Kubernetes: releases and their calendar, names, labels and taints, Kueue and its admission."""
