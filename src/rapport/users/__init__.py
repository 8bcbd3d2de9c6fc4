"""rapport.users"""
