"""sync"""
