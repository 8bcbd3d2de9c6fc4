"""rapport.eval"""
