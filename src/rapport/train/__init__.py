"""rapport.train"""
