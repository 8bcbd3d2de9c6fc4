"""rapport.store"""
